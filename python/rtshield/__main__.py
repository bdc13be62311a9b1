from rtshield.cli import main

raise SystemExit(main())
