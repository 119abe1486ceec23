"""``python -m hetnet.run --nproc N script.py``: the single-host launcher (hetnet.distributed.run)."""
from hetnet.distributed.run import main

if __name__ == "__main__":
    raise SystemExit(main())
