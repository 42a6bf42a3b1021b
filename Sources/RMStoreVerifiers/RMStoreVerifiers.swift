// RMStoreVerifiers module
