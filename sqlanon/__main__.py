import sys

from sqlanon.cli.main import main

sys.exit(main())
