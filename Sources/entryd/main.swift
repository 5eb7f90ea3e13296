print("entryd: not yet")
