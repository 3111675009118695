"""Write diabetes.csv beside this file: scikit-learn's bundled Diabetes set (offline), as your own CSV."""

from pathlib import Path

from sklearn.datasets import load_diabetes

frame = load_diabetes(as_frame=True).frame  # 442 rows: 10 features and the column "target"
frame = frame.rename(columns={"target": "progression"})
frame.to_csv(Path(__file__).with_name("diabetes.csv"), index=False)
