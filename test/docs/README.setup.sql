-- README.md: the first example works on "your" table doc(id, body).  The
-- tour starts over (CREATE EXTENSION) and so runs in a new database.
CREATE TABLE doc (id bigserial PRIMARY KEY, body text);
INSERT INTO doc (body) VALUES
  ('some text'),
  ('some text, again'),
  ('something else entirely');
