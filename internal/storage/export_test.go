package storage

// SQLiteOpenConns is the bound of the SQLite pool, for the tests.
const SQLiteOpenConns = sqliteOpenConns
