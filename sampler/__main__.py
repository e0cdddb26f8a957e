"""`python -m sampler ...` is the `nestgrad` command (for checkouts where the console script is not installed)."""
from sampler.cli import main

raise SystemExit(main())
