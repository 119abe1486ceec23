
sTensor2ab2cde