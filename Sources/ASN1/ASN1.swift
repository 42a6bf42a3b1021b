// ASN1 module
