// The reference side of `playforge check GAME.kif --trace FILE` (issue 59): random games played
// through ggp-base's ProverStateMachine, written down step by step — each state's `true` terms,
// each role's legal moves, whether it is terminal, the goals at the end, and the joint move
// chosen — so that playforge's reasoner can be held to the reference prover state by state.
// Compiled and run like ProverSpeed.java (benches/ggp/README.md):
//   java -cp OUT:guava-14.0.1.jar ProverTrace GAME.kif GAMES SEED MAX_STEPS > GAME.trace
// Terms are written as KIF with no space inside the parentheses, in lower case, sorted; a
// role's goal line lists every value that holds for it, ascending (none, one, or several).

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import org.ggp.base.util.gdl.grammar.GdlRelation;
import org.ggp.base.util.gdl.grammar.GdlSentence;
import org.ggp.base.util.prover.aima.AimaProver;
import org.ggp.base.util.game.Game;
import org.ggp.base.util.statemachine.MachineState;
import org.ggp.base.util.statemachine.Move;
import org.ggp.base.util.statemachine.Role;
import org.ggp.base.util.statemachine.StateMachine;
import org.ggp.base.util.statemachine.implementation.prover.ProverStateMachine;
import org.ggp.base.util.statemachine.implementation.prover.query.ProverQueryBuilder;

public class ProverTrace {
    static String kif(Object o) {
        return o.toString().replace("( ", "(").replace(" )", ")").toLowerCase();
    }

    public static void main(String[] args) throws Exception {
        String text = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
        int games = Integer.parseInt(args[1]);
        Random rng = new Random(Long.parseLong(args[2]));
        int maxSteps = Integer.parseInt(args[3]);
        Game game = Game.createEphemeralGame(Game.preprocessRulesheet(text));
        StateMachine sm = new ProverStateMachine();
        sm.initialize(game.getRules());
        AimaProver goals = new AimaProver(game.getRules());
        List<Role> roles = sm.getRoles();
        StringBuilder out = new StringBuilder();
        for (int g = 0; g < games; g++) {
            out.append("game ").append(g).append('\n');
            MachineState s = sm.getInitialState();
            for (int step = 0; ; step++) {
                List<String> truths = new ArrayList<>();
                for (GdlSentence t : s.getContents()) {
                    truths.add(kif(t.getBody().get(0)));
                }
                Collections.sort(truths);
                for (String t : truths) {
                    out.append("true ").append(t).append('\n');
                }
                boolean terminal = sm.isTerminal(s);
                out.append("terminal ").append(terminal ? "yes" : "no").append('\n');
                if (terminal) {
                    for (int r = 0; r < roles.size(); r++) {
                        // Every goal value that holds (the state machine's getGoal refuses
                        // anything but one), asked of the same prover.
                        List<Integer> values = new ArrayList<>();
                        for (GdlSentence held : goals.askAll(ProverQueryBuilder.getGoalQuery(roles.get(r)), ProverQueryBuilder.getContext(s))) {
                            values.add(Integer.parseInt(((GdlRelation) held).get(1).toString()));
                        }
                        Collections.sort(values);
                        out.append("goal ").append(r);
                        for (int v : values) {
                            out.append(' ').append(v);
                        }
                        out.append('\n');
                    }
                    break;
                }
                List<Move> joint = new ArrayList<>();
                for (int r = 0; r < roles.size(); r++) {
                    List<Move> legal = sm.getLegalMoves(s, roles.get(r));
                    List<String> names = new ArrayList<>();
                    for (Move m : legal) {
                        names.add(kif(m.getContents()));
                    }
                    Collections.sort(names);
                    for (String m : names) {
                        out.append("legal ").append(r).append(' ').append(m).append('\n');
                    }
                    joint.add(legal.get(rng.nextInt(legal.size())));
                }
                if (step == maxSteps) {
                    break;
                }
                for (int r = 0; r < roles.size(); r++) {
                    out.append("does ").append(r).append(' ').append(kif(joint.get(r).getContents())).append('\n');
                }
                s = sm.getNextState(s, joint);
            }
        }
        System.out.print(out);
    }
}
