import { Migration } from '@mikro-orm/migrations';

export class Migration20261122214310_initial extends Migration {

  override name = 'Migration20261122214310_initial';

  override up(): void | Promise<void> {
    this.addSql(`create table "accounts" ("id" varchar(128) not null, "email" varchar(320) not null, "name" text not null, "password_hash" text not null, "created_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "accounts" add constraint "accounts_email_unique" unique ("email");`);

    this.addSql(`create table "activity" ("id" varchar(128) not null, "account_id" varchar(128) null, "at" timestamptz(3) not null, "channel" varchar(8) not null, "actor" jsonb null, "action" text not null, "site_id" varchar(128) null, "article_id" varchar(128) null, "status" varchar(16) not null, "error_code" text null, "duration_ms" int not null, "request_id" varchar(200) not null, primary key ("id"));`);
    this.addSql(`create index "activity_account_at_index" on "activity" ("account_id", "at");`);
    this.addSql(`alter table "activity" add constraint "activity_channel_request_unique" unique ("channel", "request_id");`);

    this.addSql(`create table "api_keys" ("id" varchar(128) not null, "account_id" varchar(128) not null, "name" text not null, "scope" varchar(16) not null, "prefix" varchar(32) not null, "key_hash" varchar(128) not null, "created_at" timestamptz(3) not null, "last_used_at" timestamptz(3) null, "revoked_at" timestamptz(3) null, primary key ("id"));`);
    this.addSql(`create index "api_keys_account_id_index" on "api_keys" ("account_id");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_key_hash_unique" unique ("key_hash");`);

    this.addSql(`create table "articles" ("id" varchar(128) not null, "account_id" varchar(128) not null, "site_id" varchar(128) not null, "title" text not null, "url" varchar(2048) not null, "status" varchar(16) not null, "published_at" timestamptz(3) null, "target_keyword" text not null, "word_count" int not null, "featured_image" jsonb null, "body" text not null, "updated_at" timestamptz(3) not null, "revision" int not null, primary key ("id"));`);
    this.addSql(`create index "articles_account_id_index" on "articles" ("account_id");`);
    this.addSql(`create index "articles_site_published_index" on "articles" ("site_id", "published_at", "id");`);

    this.addSql(`create table "backlinks" ("id" varchar(128) not null, "account_id" varchar(128) not null, "site_id" varchar(128) not null, "date_acquired" varchar(10) not null, "source_domain" text not null, "source_url" varchar(2048) not null, "target_url" varchar(2048) not null, "anchor_text" text not null, "anchor_type" text not null, "category" varchar(16) not null, primary key ("id"));`);
    this.addSql(`create index "backlinks_account_id_index" on "backlinks" ("account_id");`);
    this.addSql(`create index "backlinks_site_date_index" on "backlinks" ("site_id", "date_acquired", "id");`);

    this.addSql(`create table "edit_counters" ("account_id" varchar(128) not null, "day" varchar(10) not null, "count" int not null, primary key ("account_id", "day"));`);

    this.addSql(`create table "limit_counters" ("key" varchar(300) not null, "window_start" bigint not null, "count" int not null, primary key ("key"));`);

    this.addSql(`create table "oauth_payloads" ("model" varchar(64) not null, "id" varchar(512) not null, "payload" jsonb not null, "uid" varchar(512) null, "user_code" varchar(512) null, "grant_id" varchar(512) null, "account_id" varchar(128) null, "expires_at" timestamptz(3) null, "consumed_at" timestamptz(3) null, primary key ("model", "id"));`);
    this.addSql(`create index "oauth_payloads_uid_index" on "oauth_payloads" ("uid");`);
    this.addSql(`create index "oauth_payloads_user_code_index" on "oauth_payloads" ("user_code");`);
    this.addSql(`create index "oauth_payloads_grant_id_index" on "oauth_payloads" ("grant_id");`);
    this.addSql(`create index "oauth_payloads_account_id_index" on "oauth_payloads" ("account_id");`);

    this.addSql(`create table "revisions" ("id" varchar(128) not null, "account_id" varchar(128) not null, "article_id" varchar(128) not null, "number" int not null, "origin" varchar(16) not null, "title" text not null, "body" text not null, "featured_image" jsonb null, "reason" text null, "actor" jsonb not null, "restored_from" int null, "created_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`alter table "revisions" add constraint "revisions_article_number_unique" unique ("article_id", "number");`);

    this.addSql(`create table "sites" ("id" varchar(128) not null, "account_id" varchar(128) not null, "name" text not null, "url" varchar(2048) not null, "created_at" timestamptz(3) not null, primary key ("id"));`);
    this.addSql(`create index "sites_account_name_index" on "sites" ("account_id", "name", "id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "accounts" cascade;`);
    this.addSql(`drop table if exists "activity" cascade;`);
    this.addSql(`drop table if exists "api_keys" cascade;`);
    this.addSql(`drop table if exists "articles" cascade;`);
    this.addSql(`drop table if exists "backlinks" cascade;`);
    this.addSql(`drop table if exists "edit_counters" cascade;`);
    this.addSql(`drop table if exists "limit_counters" cascade;`);
    this.addSql(`drop table if exists "oauth_payloads" cascade;`);
    this.addSql(`drop table if exists "revisions" cascade;`);
    this.addSql(`drop table if exists "sites" cascade;`);
  }

}
