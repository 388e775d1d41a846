from sqlanon.cli.process import entry

entry()
