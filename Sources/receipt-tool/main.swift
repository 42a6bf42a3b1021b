print("receipt-tool")
