module dwarfsample/tests/go-recurse

go 1.19
