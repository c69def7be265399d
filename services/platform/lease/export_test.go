package lease

// DBNow is dbNow for the tests, which compare expiries with the
// database's clock rather than their own.
var DBNow = dbNow
