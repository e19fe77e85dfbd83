== postgres
CREATE TABLE ts_metrics (time BIGINT NOT NULL, device_id INT NOT NULL, metric_id INT NOT NULL, value double precision NOT NULL, PRIMARY KEY (time, device_id, metric_id))
INSERT INTO ts_metrics (time, device_id, metric_id, value) VALUES ($1, $2, $3, $4),($5, $6, $7, $8)
ts_metrics_p3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = $1 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = $1 AND time >= $2 AND time < $3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 AND time >= 10 AND time < 20
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = $1 AND time >= $2 AND time < $3
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = 2 AND time >= 10 AND time < 20
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= $1 AND time < $2 GROUP BY device_id
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= 10 AND time < 20 GROUP BY device_id
CREATE TABLE ts_metrics (time BIGINT NOT NULL, device_id INT NOT NULL, metric_id INT NOT NULL, value double precision NOT NULL, PRIMARY KEY (time, device_id, metric_id)) PARTITION BY RANGE (time)
INSERT INTO ts_metrics (time, device_id, metric_id, value) VALUES ($1, $2, $3, $4),($5, $6, $7, $8)
ts_metrics_p3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = $1 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = $1 AND time >= $2 AND time < $3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 AND time >= 10 AND time < 20
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = $1 AND time >= $2 AND time < $3
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = 2 AND time >= 10 AND time < 20
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= $1 AND time < $2 GROUP BY device_id
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= 10 AND time < 20 GROUP BY device_id
== mysql InnoDB
CREATE TABLE ts_metrics (time BIGINT NOT NULL, device_id INT NOT NULL, metric_id INT NOT NULL, value double NOT NULL, PRIMARY KEY (time, device_id, metric_id)) ENGINE=InnoDB
INSERT INTO ts_metrics (time, device_id, metric_id, value) VALUES (?, ?, ?, ?),(?, ?, ?, ?)
p3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? AND time >= ? AND time < ?
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 AND time >= 10 AND time < 20
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = ? AND time >= ? AND time < ?
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = 2 AND time >= 10 AND time < 20
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= ? AND time < ? GROUP BY device_id
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= 10 AND time < 20 GROUP BY device_id
CREATE TABLE ts_metrics (time BIGINT NOT NULL, device_id INT NOT NULL, metric_id INT NOT NULL, value double NOT NULL, PRIMARY KEY (time, device_id, metric_id)) ENGINE=InnoDB
INSERT INTO ts_metrics (time, device_id, metric_id, value) VALUES (?, ?, ?, ?),(?, ?, ?, ?)
p3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? AND time >= ? AND time < ?
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 AND time >= 10 AND time < 20
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = ? AND time >= ? AND time < ?
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = 2 AND time >= 10 AND time < 20
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= ? AND time < ? GROUP BY device_id
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= 10 AND time < 20 GROUP BY device_id
== mariadb ROCKSDB
CREATE TABLE ts_metrics (time BIGINT NOT NULL, device_id INT NOT NULL, metric_id INT NOT NULL, value double NOT NULL, PRIMARY KEY (time, device_id, metric_id)) ENGINE=ROCKSDB
INSERT INTO ts_metrics (time, device_id, metric_id, value) VALUES (?, ?, ?, ?),(?, ?, ?, ?)
p3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? AND time >= ? AND time < ?
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 AND time >= 10 AND time < 20
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = ? AND time >= ? AND time < ?
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = 2 AND time >= 10 AND time < 20
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= ? AND time < ? GROUP BY device_id
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= 10 AND time < 20 GROUP BY device_id
CREATE TABLE ts_metrics (time BIGINT NOT NULL, device_id INT NOT NULL, metric_id INT NOT NULL, value double NOT NULL, PRIMARY KEY (time, device_id, metric_id)) ENGINE=ROCKSDB
INSERT INTO ts_metrics (time, device_id, metric_id, value) VALUES (?, ?, ?, ?),(?, ?, ?, ?)
p3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? AND time >= ? AND time < ?
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 AND time >= 10 AND time < 20
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = ? AND time >= ? AND time < ?
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = 2 AND time >= 10 AND time < 20
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= ? AND time < ? GROUP BY device_id
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= 10 AND time < 20 GROUP BY device_id
== sqlite
CREATE TABLE ts_metrics (time BIGINT NOT NULL, device_id INT NOT NULL, metric_id INT NOT NULL, value REAL NOT NULL, PRIMARY KEY (time, device_id, metric_id))
INSERT INTO ts_metrics (time, device_id, metric_id, value) VALUES (?, ?, ?, ?),(?, ?, ?, ?)
p3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? AND time >= ? AND time < ?
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 AND time >= 10 AND time < 20
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = ? AND time >= ? AND time < ?
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = 2 AND time >= 10 AND time < 20
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= ? AND time < ? GROUP BY device_id
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= 10 AND time < 20 GROUP BY device_id
CREATE TABLE ts_metrics (time BIGINT NOT NULL, device_id INT NOT NULL, metric_id INT NOT NULL, value REAL NOT NULL, PRIMARY KEY (time, device_id, metric_id))
INSERT INTO ts_metrics (time, device_id, metric_id, value) VALUES (?, ?, ?, ?),(?, ?, ?, ?)
p3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? AND time >= ? AND time < ?
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 AND time >= 10 AND time < 20
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = ? AND time >= ? AND time < ?
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = 2 AND time >= 10 AND time < 20
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= ? AND time < ? GROUP BY device_id
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= 10 AND time < 20 GROUP BY device_id
== null
CREATE TABLE ts_metrics (time BIGINT NOT NULL, device_id INT NOT NULL, metric_id INT NOT NULL, value REAL NOT NULL, PRIMARY KEY (time, device_id, metric_id))
INSERT INTO ts_metrics (time, device_id, metric_id, value) VALUES (?, ?, ?, ?),(?, ?, ?, ?)
p3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? AND time >= ? AND time < ?
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 AND time >= 10 AND time < 20
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = ? AND time >= ? AND time < ?
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = 2 AND time >= 10 AND time < 20
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= ? AND time < ? GROUP BY device_id
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= 10 AND time < 20 GROUP BY device_id
CREATE TABLE ts_metrics (time BIGINT NOT NULL, device_id INT NOT NULL, metric_id INT NOT NULL, value REAL NOT NULL, PRIMARY KEY (time, device_id, metric_id))
INSERT INTO ts_metrics (time, device_id, metric_id, value) VALUES (?, ?, ?, ?),(?, ?, ?, ?)
p3
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 ORDER BY time DESC LIMIT 10
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = ? AND time >= ? AND time < ?
SELECT time, metric_id, value FROM ts_metrics WHERE device_id = 4 AND time >= 10 AND time < 20
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = ? AND time >= ? AND time < ?
SELECT device_id, time, value FROM ts_metrics WHERE metric_id = 2 AND time >= 10 AND time < 20
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= ? AND time < ? GROUP BY device_id
SELECT device_id, MIN(value), MAX(value) FROM ts_metrics WHERE time >= 10 AND time < 20 GROUP BY device_id
