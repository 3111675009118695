"""The papers' data as a library, apart from their content folders (afr_cli/papers/<id>/).

``knowledge`` reads each folder's paper.yaml (orders, tables, claims, reports, studies);
``published`` loads the published tables and the t-tests printed in the papers' texts;
``printed_tests`` recomputes those t-tests from the tables they are about. May import
afr_cli.analysis, afr_cli.store, afr_cli.core and afr_cli.errors.
"""
