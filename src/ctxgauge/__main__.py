from ctxgauge.cli import main

main()
