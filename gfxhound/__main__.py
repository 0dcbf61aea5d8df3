import sys

from gfxhound.cli import main

sys.exit(main())
