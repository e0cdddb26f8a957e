"""`python -m nestgrad ...` is the `nestgrad` command (for checkouts where the console script is not installed)."""
from nestgrad.sampler.cli import main

raise SystemExit(main())
