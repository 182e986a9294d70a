/**
 * The judged set of the search bench: 32 articles written for it, each with the query a person
 * would type to find it, and distractors that share some of the query's words (in the body, or
 * the title of an unrelated topic) so that the order, not only the match, is judged.
 */
export interface JudgedArticle {
  readonly key: string
  readonly title: string
  readonly keyword: string
  readonly body: string
  readonly query: string
}

const p = (...sentences: ReadonlyArray<string>) => sentences.map((s) => `<p>${s}</p>`).join("")

/** Each entry: the best article for `query`. */
export const JUDGED: ReadonlyArray<JudgedArticle> = [
  { key: "blight", title: "Tomato blight in wet summers", keyword: "tomato blight", query: "tomato blight", body: p("Blight turns tomato leaves brown in a wet summer.", "Remove infected leaves and water the soil, not the plant.") },
  { key: "roses", title: "Pruning roses in late winter", keyword: "pruning roses", query: "prune roses winter", body: p("Prune roses when the hardest frosts are over.", "Cut to an outward-facing bud; winter pruning keeps roses open.") },
  { key: "compost", title: "Building a compost heap that heats up", keyword: "compost heap", query: '"compost heap"', body: p("A compost heap needs greens and browns in layers.", "Turn the heap every two weeks to keep it hot.") },
  { key: "sourdough", title: "Keeping a sourdough starter alive", keyword: "sourdough starter", query: "sourdough starter", body: p("Feed the starter flour and water daily.", "A sluggish sourdough starter wants warmth.") },
  { key: "espresso", title: "Dialling in espresso grind size", keyword: "espresso grind", query: "espresso grind", body: p("Grind finer when the shot runs fast.", "Espresso extraction depends on grind, dose and time.") },
  { key: "creme", title: "Crème brûlée without a blowtorch", keyword: "creme brulee", query: "creme brulee", body: p("Caramelise the sugar under a very hot grill.", "Chill the custards overnight first.") },
  { key: "aphids", title: "Natural pest control on broad beans", keyword: "aphids", query: "aphids ladybirds", body: p("Aphids cluster on the tips of broad beans.", "Ladybirds and their larvae eat aphids by the hundred.") },
  { key: "lawn", title: "Scarifying a mossy lawn", keyword: "scarify lawn", query: "moss lawn scarifying", body: p("Scarifying pulls moss and thatch out of the lawn.", "Do it in early autumn and overseed straight after.") },
  { key: "bees", title: "Plants that feed bees all year", keyword: "bee friendly plants", query: "plants for bees", body: p("Crocus in spring, lavender in summer, ivy in autumn.", "Bees need flowers from February to November.") },
  { key: "pond", title: "Clearing green water from a garden pond", keyword: "green pond water", query: "green water pond", body: p("Green water is algae fed by sunlight and nutrients.", "Shade the pond with lilies and add oxygenating plants.") },
  { key: "kimchi", title: "Fermenting kimchi at home", keyword: "kimchi", query: "kimchi fermentation", body: p("Salt the cabbage, rinse, then pack it with the paste.", "Fermentation takes three to five days at room temperature.") },
  { key: "bread", title: "Why my bread does not rise", keyword: "bread rising", query: "bread not rising yeast", body: p("Old yeast, cold kitchens and too much salt stop bread rising.", "Test the yeast in warm water with a pinch of sugar.") },
  { key: "seeds", title: "Saving seeds from heirloom beans", keyword: "seed saving", query: "saving bean seeds", body: p("Let the bean pods dry on the plant.", "Store the seeds in paper envelopes somewhere cool.") },
  { key: "slugs", title: "Keeping slugs off hostas", keyword: "slugs hostas", query: "slugs hostas", body: p("Slugs love the young leaves of hostas.", "Copper tape and night patrols work better than pellets.") },
  { key: "tiles", title: "Regrouting bathroom tiles", keyword: "regrout tiles", query: "regrout bathroom tiles", body: p("Rake out the old grout to two millimetres.", "Seal the new grout after a day.") },
  { key: "paint", title: "Painting over damp walls", keyword: "damp walls paint", query: "paint damp wall", body: p("Find and fix the cause of damp first.", "Use a stain block before the paint.") },
  { key: "solar", title: "Are solar panels worth it on a north roof", keyword: "solar panels", query: "solar panels north roof", body: p("A north-facing roof yields about half of a south-facing one.", "Panels on east and west roofs are a better compromise.") },
  { key: "heatpump", title: "Heat pump running costs in winter", keyword: "heat pump costs", query: "heat pump running costs", body: p("Running costs depend on the flow temperature.", "A well-sized heat pump runs long and low.") },
  { key: "cycling", title: "Fixing a puncture on the road", keyword: "bike puncture", query: "fix bike puncture", body: p("Find the thorn before you fit the new tube.", "Carry tyre levers and a mini pump on every ride.") },
  { key: "running", title: "Training for a first marathon", keyword: "marathon training", query: "first marathon training plan", body: p("Build the long run by a mile a week.", "A training plan of sixteen weeks suits a first marathon.") },
  { key: "chess", title: "The Sicilian defence for beginners", keyword: "sicilian defence", query: "sicilian defence", body: p("Black answers e4 with c5.", "The Sicilian fights for the centre from the side.") },
  { key: "camera", title: "Shooting the night sky with a phone", keyword: "night sky photography", query: "night sky photos phone", body: p("Use a tripod and the longest exposure your phone offers.", "Photos of stars need a dark site away from towns.") },
  { key: "python", title: "Reading a CSV file in Python", keyword: "python csv", query: "python csv", body: p("The csv module reads rows as lists.", "Pandas reads the whole file into a data frame.") },
  { key: "git", title: "Undoing the last git commit", keyword: "git undo commit", query: "undo last git commit", body: p("git reset --soft HEAD~1 keeps the changes staged.", "A pushed commit is better reverted.") },
  { key: "sleep", title: "Getting a baby to sleep through the night", keyword: "baby sleep", query: "baby sleep through night", body: p("A calm bedtime routine helps a baby settle.", "Sleep through the night comes at very different ages.") },
  { key: "dog", title: "Teaching a puppy to walk on a loose lead", keyword: "loose lead walking", query: "puppy loose lead", body: p("Stop when the lead goes tight.", "Reward the puppy for walking at your side.") },
  { key: "cat", title: "When a cat stops eating", keyword: "cat not eating", query: "cat stopped eating", body: p("A cat that stops eating for a day needs a vet.", "Cats can develop liver trouble after fasting.") },
  { key: "wine", title: "Pairing wine with spicy food", keyword: "wine pairing", query: "wine spicy food", body: p("Off-dry Riesling calms the heat of spicy food.", "Avoid high-alcohol wines with chilli.") },
  { key: "tea", title: "Brewing green tea without bitterness", keyword: "green tea", query: "green tea bitter", body: p("Water just off the boil makes green tea bitter.", "Brew at 75 degrees for two minutes.") },
  { key: "knife", title: "Sharpening a kitchen knife on a whetstone", keyword: "knife sharpening", query: "sharpen knife whetstone", body: p("Hold the knife at fifteen degrees to the whetstone.", "Work up from coarse grit to fine.") },
  { key: "mould", title: "Stopping mould in a bedroom", keyword: "bedroom mould", query: "mould bedroom condensation", body: p("Condensation on cold walls feeds mould.", "Ventilate the bedroom every morning.") },
  { key: "tax", title: "Self assessment deadlines explained", keyword: "self assessment", query: "self assessment deadline", body: p("The online deadline is the last day of January.", "Paper returns are due three months earlier.") },
]

/** Distractors: articles that share words with the queries without being what they ask for. */
export const DISTRACTORS: ReadonlyArray<{ readonly title: string; readonly body: string }> = [
  { title: "Growing tomatoes in pots", body: p("Tomato plants in pots need daily water; blight is rarer under cover.", "Feed tomatoes weekly once they flower.") },
  { title: "Potato blight and how to spot it", body: p("Blight also affects tomato plants; the spores travel on the wind.") },
  { title: "Climbing roses for a north wall", body: p("Some roses flower on a cold wall; prune them after flowering, not in winter.") },
  { title: "Leaf mould in a year", body: p("Leaves rot slowly; keep them apart from the compost heap.") },
  { title: "Baking with rye flour", body: p("Rye makes a dense bread; a sourdough starter gives it lift.", "Yeast alone is not enough for rye.") },
  { title: "Cold brew coffee", body: p("Cold brew wants a coarse grind, unlike espresso.") },
  { title: "Ladybirds in the garden", body: p("Ladybirds overwinter in hollow stems.") },
  { title: "Wildflower meadows", body: p("A meadow feeds bees and butterflies; it needs poor soil, not a lawn.") },
  { title: "Making a wildlife pond", body: p("A pond without fish fills with frogs; the water may turn green at first.") },
  { title: "Quick pickles", body: p("Pickling is not fermentation: vinegar does the work.") },
  { title: "Heat pumps and solar together", body: p("Solar panels can cover part of what a heat pump uses in summer.") },
  { title: "Road bike tyres", body: p("Wider tyres puncture less and roll as fast.") },
  { title: "Couch to 5k", body: p("A training plan for a first run of five kilometres, not a marathon.") },
  { title: "Opening moves in chess", body: p("The Sicilian, the French and the Caro-Kann answer e4.") },
  { title: "Phone photography basics", body: p("Clean the lens; tap to focus; shoot in daylight.") },
  { title: "Git branches", body: p("A branch is a pointer to a commit.") },
  { title: "Puppy's first week", body: p("Buy a lead and a crate before the puppy comes home.") },
  { title: "Choosing green tea", body: p("Sencha, matcha and gunpowder are all green tea.") },
  { title: "Knife skills", body: p("A sharp knife is a safe knife.") },
  { title: "Damp proof courses", body: p("Rising damp is rarer than condensation; do not paint over it.") },
]
