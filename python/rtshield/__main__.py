from rtshield.entry import main

raise SystemExit(main())
