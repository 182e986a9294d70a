import { Migration } from '@mikro-orm/migrations';

/**
 * An activity entry says how many calls it stands for (`count`): 1, or the refused calls of one
 * address or key in one minute past its budget, summed in one entry (`src/activityJournal.ts`).
 * Entries made before stood for one call each. Generated from the entities (the generated `down`
 * also rebuilt the partitioned activity table, a false diff; dropped by hand).
 */
export class Migration20261127143417_activityCount extends Migration {

  override name = 'Migration20261127143417_activityCount';

  override up(): void | Promise<void> {
    this.addSql(`alter table "activity" add "count" int not null default 1;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "activity" drop column "count";`);
  }

}
