// The program lives in ProgramCommands (authsim can be it too, by name).
import ProgramCommands

_ = await Programs.run(named: "redirect-interceptor")
