"""Put this folder on sys.path: the unit functions in executor_work.py are imported by name, here and in
every worker process (spawned workers start with this process's sys.path)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
