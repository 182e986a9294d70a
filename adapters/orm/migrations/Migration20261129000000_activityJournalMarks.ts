import { Migration } from '@mikro-orm/migrations';

/**
 * How far the summary lines of each activity journal file have been added to their entries
 * (`src/activityJournal.ts`): a summary line adds its count, so a batch sent again (its answer
 * lost, or the file replayed after its process was killed) must not add it twice. The mark moves
 * in the same statement that adds the counts. A file's row goes when the file is deleted.
 */
export class Migration20261129000000_activityJournalMarks extends Migration {

  override name = 'Migration20261129000000_activityJournalMarks';

  override up(): void | Promise<void> {
    this.addSql(`create table "activity_journal_marks" ("file" varchar(200) not null, "bytes" bigint not null, "at" timestamptz(3) not null, constraint "activity_journal_marks_pkey" primary key ("file"));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "activity_journal_marks" cascade;`);
  }

}
