"""The benchmarks' data files: ``verl-rewards data get`` installs tau2-bench's and tau-bench's files from their
pinned upstream commits into the installed data folder, checked against the sha256 manifest shipped here
(:mod:`.manifest`, :mod:`.mirror`, :mod:`.convert`, :mod:`.install`, :mod:`.command`)."""
