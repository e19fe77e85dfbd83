== postgres
CREATE TABLE kv (k bigint NOT NULL PRIMARY KEY, v varchar(100) NOT NULL)
INSERT INTO kv (k, v) VALUES ($1, $2),($3, $4),($5, $6)
SELECT v FROM kv WHERE k = $1
UPDATE kv SET v = $1 WHERE k = $2
per statement 65535
== mysql InnoDB
CREATE TABLE kv (k bigint NOT NULL PRIMARY KEY, v varchar(100) NOT NULL) ENGINE=InnoDB
INSERT INTO kv (k, v) VALUES (?, ?),(?, ?),(?, ?)
SELECT v FROM kv WHERE k = ?
UPDATE kv SET v = ? WHERE k = ?
per statement 65535
== mariadb ROCKSDB
CREATE TABLE kv (k bigint NOT NULL PRIMARY KEY, v varchar(100) NOT NULL) ENGINE=ROCKSDB
INSERT INTO kv (k, v) VALUES (?, ?),(?, ?),(?, ?)
SELECT v FROM kv WHERE k = ?
UPDATE kv SET v = ? WHERE k = ?
per statement 65535
== sqlite
CREATE TABLE kv (k INTEGER NOT NULL PRIMARY KEY, v TEXT NOT NULL)
INSERT INTO kv (k, v) VALUES (?, ?),(?, ?),(?, ?)
SELECT v FROM kv WHERE k = ?
UPDATE kv SET v = ? WHERE k = ?
per statement 32766
== null
CREATE TABLE kv (k BIGINT NOT NULL PRIMARY KEY, v VARCHAR(100) NOT NULL)
INSERT INTO kv (k, v) VALUES (?, ?),(?, ?),(?, ?)
SELECT v FROM kv WHERE k = ?
UPDATE kv SET v = ? WHERE k = ?
per statement 18446744073709551615
