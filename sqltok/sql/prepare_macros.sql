-- PII masking by kind, each with its placeholder as a named parameter, over sqltok_pii_masked (which also
-- returns the kind of each find).
CREATE OR REPLACE TEMP MACRO mask_pii(text, email := '[EMAIL]', phone := '[PHONE]', ip := '[IP]',
                                      card := '[CARD]', iban := '[IBAN]', credentials := '[CREDENTIALS]') AS
    sqltok_pii_masked(text, ['credentials', 'email', 'iban', 'card', 'ip', 'phone'],
                      [credentials, email, iban, card, ip, phone]).text;
CREATE OR REPLACE TEMP MACRO mask_email(text, placeholder := '[EMAIL]') AS sqltok_pii_masked(text, ['email'], [placeholder]).text;
CREATE OR REPLACE TEMP MACRO mask_phone(text, placeholder := '[PHONE]') AS sqltok_pii_masked(text, ['phone'], [placeholder]).text;
CREATE OR REPLACE TEMP MACRO mask_ip(text, placeholder := '[IP]') AS sqltok_pii_masked(text, ['ip'], [placeholder]).text;
CREATE OR REPLACE TEMP MACRO mask_card(text, placeholder := '[CARD]') AS sqltok_pii_masked(text, ['card'], [placeholder]).text;
CREATE OR REPLACE TEMP MACRO mask_iban(text, placeholder := '[IBAN]') AS sqltok_pii_masked(text, ['iban'], [placeholder]).text;
CREATE OR REPLACE TEMP MACRO mask_credentials(text, placeholder := '[CREDENTIALS]') AS
    sqltok_pii_masked(text, ['credentials'], [placeholder]).text;

-- The text without control characters other than tab, line feed and carriage return (C0, DEL, C1).
CREATE OR REPLACE TEMP MACRO strip_controls(text) AS
    regexp_replace(text, '[\x00-\x08\x0B\x0C\x0E-\x1F\x7F\x{80}-\x{9F}]', '', 'g');
