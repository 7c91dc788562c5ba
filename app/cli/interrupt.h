// Ctrl+C, `kill` and a closed terminal (SIGINT, SIGTERM, SIGHUP) while training: the first one asks the trainer to
// stop cleanly, so the window writes its autosave and the headless trainer its --save checkpoint before quitting;
// a second Ctrl+C quits at once (repeats of the others are ignored: a closing terminal may send SIGHUP twice; so is a
// SIGINT within half a second of the first: the same Ctrl+C delivered to the process and again to its group).
// SIGPIPE (the output's reader went away) stops cleanly too. Signals ignored on entry (nohup, a script's background
// job) stay ignored.
#pragma once

namespace attn {

// Installs the handlers; `what` ends the line printed when the first signal arrives ("stopping after this step").
void install_interrupt_handlers(const char* what);
// Changes that line from now on (headless: "stopping the sample" once training is over and saved).
void set_interrupt_message(const char* what);
// The signal number that asked to stop, or 0.
int interrupt_signal();
// "SIGINT", "SIGTERM" or "SIGHUP" (for messages).
const char* interrupt_name(int sig);

}  // namespace attn
