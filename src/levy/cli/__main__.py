import sys

from levy.cli import main

sys.exit(main())
