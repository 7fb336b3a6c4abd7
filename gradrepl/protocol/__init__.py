"""The wall between the frontend's process and the learner's: what both sides agree on and nothing
else. messages.py holds the wire format, the ops and the caps; reply_schema.py the shape of every reply;
interrupt_word.py the layout of the shared interrupt word. Imports neither gradrepl.client nor
gradrepl.kernel, and nothing heavy: both processes load it."""
