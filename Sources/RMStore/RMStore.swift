// RMStore module
