// StoreTesting module
