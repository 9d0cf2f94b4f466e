from fedtheory.cli import main

raise SystemExit(main())
