-- PII masking by kind, each with its placeholder as a named parameter, over sqltok_mask_pii.
CREATE OR REPLACE TEMP MACRO mask_pii(text, email := '[EMAIL]', phone := '[PHONE]', ip := '[IP]',
                                      card := '[CARD]', iban := '[IBAN]', credentials := '[CREDENTIALS]') AS
    sqltok_mask_pii(text, ['credentials', 'email', 'iban', 'card', 'ip', 'phone'],
                    [credentials, email, iban, card, ip, phone]);
CREATE OR REPLACE TEMP MACRO mask_email(text, placeholder := '[EMAIL]') AS sqltok_mask_pii(text, ['email'], [placeholder]);
CREATE OR REPLACE TEMP MACRO mask_phone(text, placeholder := '[PHONE]') AS sqltok_mask_pii(text, ['phone'], [placeholder]);
CREATE OR REPLACE TEMP MACRO mask_ip(text, placeholder := '[IP]') AS sqltok_mask_pii(text, ['ip'], [placeholder]);
CREATE OR REPLACE TEMP MACRO mask_card(text, placeholder := '[CARD]') AS sqltok_mask_pii(text, ['card'], [placeholder]);
CREATE OR REPLACE TEMP MACRO mask_iban(text, placeholder := '[IBAN]') AS sqltok_mask_pii(text, ['iban'], [placeholder]);
CREATE OR REPLACE TEMP MACRO mask_credentials(text, placeholder := '[CREDENTIALS]') AS
    sqltok_mask_pii(text, ['credentials'], [placeholder]);
