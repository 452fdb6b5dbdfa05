from errorkb.cli import run

run()
