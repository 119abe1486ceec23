"""``python -m hetnet.distributed --nproc N script.py ...`` is hetnet.distributed.run."""
import sys

from hetnet.distributed.run import main

sys.exit(main())
