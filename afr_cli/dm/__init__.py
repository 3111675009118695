"""Decision Machines (Zhang): trees and tree ensembles as matrices, exact and soft."""

from afr_cli.dm.construction import ensemble_parts
from afr_cli.dm.machine import DecisionMachine
from afr_cli.dm.rebuild import Leaf, Split

__all__ = ["DecisionMachine", "Leaf", "Split", "ensemble_parts"]
