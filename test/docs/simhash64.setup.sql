-- doc/simhash64.md: the page creates docs(id, body, fp) itself; its
-- hamming_ball examples query doc(id, sh).
CREATE TABLE doc (id bigint PRIMARY KEY, sh simhash64);
INSERT INTO doc VALUES (1, '0123456789abcdef'), (2, '0123456789abcdee'), (3, 'fedcba9876543210');
