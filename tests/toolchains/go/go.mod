module work

go 1.19
