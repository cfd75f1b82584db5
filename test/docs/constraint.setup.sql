-- doc/constraint.md: old_tickets, a table of tickets without the constraint
-- that already holds near-copies (rows 1 and 2, and 3 and 4).
CREATE TABLE old_tickets (
    id   bigint PRIMARY KEY,
    body text NOT NULL,
    sh   simhash64 GENERATED ALWAYS AS (simhash(body)) STORED
);
INSERT INTO old_tickets (id, body) VALUES
  (1, 'My printer does not print anything since the last update, please help'),
  (2, 'My printer does not print anything since the last update, please help!'),
  (3, 'I cannot log in to my account after resetting my password'),
  (4, 'I cannot log in to my account after resetting my password.'),
  (5, 'Where can I download the invoice for my last order?');
