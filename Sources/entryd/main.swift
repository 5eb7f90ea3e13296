// entryd's entry point: everything, from the options to the exit status, is in EntryDaemon.
EntryDaemon.main()
