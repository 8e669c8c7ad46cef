from ptonnx.cli import main

raise SystemExit(main())
