// The reference side of docs/results.md's GDL speed table (issue 59): random play through
// ggp-base's ProverStateMachine, measured as `playforge bench GAME.kif` measures ours — joint
// moves (states reached) per second on one thread, each role choosing uniformly at random, a
// playout cut by the clock counting its moves but not itself. ggp-base is not part of this
// repository: fetch it (github.com/ggp-org/ggp-base), compile its org.ggp.base.util sources
// with Guava 14 on the class path, then
//   javac -cp OUT benches/ggp/ProverSpeed.java -d OUT
//   java -cp OUT:guava-14.0.1.jar ProverSpeed GAME.kif SECONDS
// (benches/ggp/README.md gives the commands in full).

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;

import org.ggp.base.util.game.Game;
import org.ggp.base.util.statemachine.MachineState;
import org.ggp.base.util.statemachine.Move;
import org.ggp.base.util.statemachine.StateMachine;
import org.ggp.base.util.statemachine.implementation.prover.ProverStateMachine;

public class ProverSpeed {
    public static void main(String[] args) throws Exception {
        String text = new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8);
        double seconds = Double.parseDouble(args[1]);
        Game game = Game.createEphemeralGame(Game.preprocessRulesheet(text));
        StateMachine sm = new ProverStateMachine();
        sm.initialize(game.getRules());
        MachineState start = sm.getInitialState();
        long moves = 0, playouts = 0;
        long t0 = System.nanoTime();
        clock:
        while ((System.nanoTime() - t0) / 1e9 < seconds) {
            MachineState s = start;
            while (!sm.isTerminal(s)) {
                List<Move> joint = sm.getRandomJointMove(s);
                s = sm.getNextState(s, joint);
                moves++;
                if ((System.nanoTime() - t0) / 1e9 >= seconds) {
                    break clock;
                }
            }
            playouts++;
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        double per = playouts > 0 ? (double) moves / playouts : Double.NaN;
        System.out.printf("| %s | %.1f | %.1f | %.1f |%n", args[0], playouts / secs, moves / secs, per);
    }
}
