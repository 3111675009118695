"""Publishing: frames -> tables and statistics -> claims -> pages and site -> the build that drives them."""
