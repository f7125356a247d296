from trawl.cli import main

main()
