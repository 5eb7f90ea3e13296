// entryd-web's entry point: everything, from the options to the exit status, is in WebDaemon.
WebDaemon.main()
