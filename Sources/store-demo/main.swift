print("store-demo")
