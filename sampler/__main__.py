"""`python -m nestgrad.sampler ...` is the `nestgrad` command."""
from nestgrad.sampler.cli import main

raise SystemExit(main())
