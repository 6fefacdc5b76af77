// The bridge's C# client (protocol 1, docs/bridge.md), for Unity or any .NET/Mono game: the
// game asks playforge to "pick one of N" at each decision and reports its score at the end.
// One file, no dependencies beyond the base class library (C# 7, .NET Framework 4.x or
// .NET Standard 2.0 profiles, as Unity's): copy it into the game's scripts.
//
//   var game = Playforge.Bridge.Connect("roguelike", measures: new[] { "turns" });
//   foreach (var episode in game.Episodes()) {          // until playforge says stop
//       var world = new World(episode.Seed, episode.Param("rooms", 5));
//       while (!world.Over) world.Play(world.Moves[episode.Select(world.Moves.Count)]);
//       episode.Outcome(world.Score, new Dictionary<string, double> { { "turns", world.Turns } });
//   }
//
// Bridge.Select / Bridge.Outcome / Bridge.Settings act on the episode in progress, for a game
// whose decisions are made far from its main loop (a Unity MonoBehaviour). Outside playforge
// (no PLAYFORGE_PROTOCOL in the environment) Connect throws NoDriver: the game then plays for a
// human. The default policy is the SplitMix64 stream docs/bridge.md specifies, so a C# game
// makes the same choices as a Python or JavaScript one for the same policy seed.

using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Net.Sockets;
using System.Text;

namespace Playforge
{
    /// <summary>The process was not started by playforge (no PLAYFORGE_PROTOCOL).</summary>
    public class NoDriver : Exception
    {
        public NoDriver(string message) : base(message) { }
    }

    /// <summary>playforge closed the connection (the run is over or gone): quit.</summary>
    public class ExperimentFinished : Exception
    {
        public ExperimentFinished(string message) : base(message) { }
    }

    /// <summary>A message the client cannot accept (a wrong protocol, a prefix entry out of range…).</summary>
    public class ProtocolError : Exception
    {
        public ProtocolError(string message) : base(message) { }
    }

    /// <summary>A declared parameter: its name, range and whether it is a whole number.</summary>
    public class Param
    {
        public string Name;
        public double Min, Max;
        public bool Integer;

        public Param(string name, double min, double max, bool integer)
        {
            Name = name;
            Min = min;
            Max = max;
            Integer = integer;
        }
    }

    /// <summary>The default policy's generator, as docs/bridge.md specifies it (every client agrees).</summary>
    public class SplitMix64
    {
        ulong state;

        public SplitMix64(ulong seed)
        {
            state = seed;
        }

        public ulong Next()
        {
            unchecked
            {
                state += 0x9E3779B97F4A7C15UL;
                ulong z = state;
                z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
                z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
                return z ^ (z >> 31);
            }
        }

        /// <summary>((next >> 11) · n) >> 53, computed without overflow for any n of an int.</summary>
        public int Uniform(int n)
        {
            ulong x = Next() >> 11; // 53 bits
            ulong hi = x >> 32, lo = x & 0xFFFFFFFFUL, m = (ulong)n;
            // (hi·2^32 + lo)·n >> 53 = (hi·n + (lo·n >> 32)) >> 21
            return (int)((hi * m + ((lo * m) >> 32)) >> 21);
        }

        public int Softmax(IList<double> weights)
        {
            double top = double.NegativeInfinity;
            foreach (double w in weights) top = Math.Max(top, w);
            var p = new double[weights.Count];
            double sum = 0.0;
            for (int i = 0; i < p.Length; i++) p[i] = Math.Exp(weights[i] - top);
            foreach (double q in p) sum += q;
            double u = (double)(Next() >> 11) * Math.Pow(2.0, -53) * sum;
            double acc = 0.0;
            for (int i = 0; i < p.Length; i++)
            {
                acc += p[i];
                if (acc > u) return i;
            }
            return p.Length - 1;
        }
    }

    /// <summary>One playthrough: its seed, its settings, and the choices to make.</summary>
    public class Episode
    {
        readonly Link link;
        readonly List<int> prefix = new List<int>();
        readonly SplitMix64 rng;
        public readonly long Id;
        public readonly ulong Seed;
        /// <summary>The episode's settings: "style", "variant" (strings or null), "params" (name → number).</summary>
        public readonly Dictionary<string, object> Settings;
        /// <summary>[choice, n] of every decision so far.</summary>
        public readonly List<int[]> Trace = new List<int[]>();
        public readonly List<IList<string>> Labels = new List<IList<string>>();
        public bool Done { get; private set; }

        internal Episode(Link link, Dictionary<string, object> msg)
        {
            this.link = link;
            Id = Json.ToLong(Json.Get(msg, "id"));
            Seed = Json.ToULong(Json.Get(msg, "seed"));
            Settings = Json.Get(msg, "settings") as Dictionary<string, object> ?? new Dictionary<string, object>();
            var p = Json.Get(msg, "prefix") as List<object>;
            if (p != null) foreach (object c in p) prefix.Add((int)Json.ToLong(c));
            object ps = Json.Get(msg, "policy_seed");
            rng = new SplitMix64(ps == null ? 0UL : Json.ToULong(ps));
        }

        /// <summary>The play style playforge asks for (null: the game's default).</summary>
        public string Style { get { return Json.Get(Settings, "style") as string; } }

        /// <summary>The design variant playforge asks for (null: the game's default).</summary>
        public string Variant { get { return Json.Get(Settings, "variant") as string; } }

        /// <summary>A declared parameter's value in this episode, or `fallback` when not sent.</summary>
        public double Param(string name, double fallback)
        {
            var ps = Json.Get(Settings, "params") as Dictionary<string, object>;
            object v = ps == null ? null : Json.Get(ps, name);
            return v == null ? fallback : Json.ToDouble(v);
        }

        /// <summary>An index in [0, n): the prefix's next entry, then the default policy (uniform,
        /// or softmax of `weights`).</summary>
        public int Select(int n, IList<double> weights = null, IList<string> labels = null)
        {
            if (Done) throw new ProtocolError("select after outcome; expected the next episode");
            if (n < 1) throw new ProtocolError("select(" + n + "); expected at least one option");
            if (weights != null && weights.Count != n)
                throw new ProtocolError("select(" + n + ") with " + weights.Count + " weights; expected one per option");
            int k = Trace.Count;
            int choice;
            if (k < prefix.Count)
            {
                choice = prefix[k];
                if (choice < 0 || choice >= n)
                {
                    string message = "prefix entry " + k + " is " + choice + ", but the game offers " + n + " options";
                    link.Send(Json.Object("type", "error", "message", message));
                    throw new ProtocolError(message + ": the game is not deterministic under its seed");
                }
            }
            else
            {
                choice = weights != null ? rng.Softmax(weights) : rng.Uniform(n);
            }
            Trace.Add(new[] { choice, n });
            Labels.Add(labels);
            return choice;
        }

        /// <summary>Ends the episode: its score, its measures and the whole trace go to playforge.</summary>
        public void Outcome(double score, IDictionary<string, double> measures = null)
        {
            if (Done) throw new ProtocolError("a second outcome for one episode");
            if (double.IsNaN(score) || double.IsInfinity(score)) throw new ProtocolError("score " + score + "; expected a finite number");
            Done = true;
            var m = new SortedDictionary<string, object>(StringComparer.Ordinal);
            if (measures != null) foreach (var kv in measures) m[kv.Key] = kv.Value;
            var trace = new List<object>();
            foreach (int[] t in Trace) trace.Add(new List<object> { (long)t[0], (long)t[1] });
            link.Send(Json.Object("type", "outcome", "id", Id, "score", score, "measures", m, "trace", trace));
        }
    }

    /// <summary>One JSON line per message, on a socket or on stdin/stdout.</summary>
    class Link
    {
        readonly TextReader input;
        readonly TextWriter output;

        internal Link(IDictionary env)
        {
            var utf8 = new UTF8Encoding(false);
            if ((env["PLAYFORGE_STDIO"] as string) == "1")
            {
                input = new StreamReader(Console.OpenStandardInput(), utf8);
                output = new StreamWriter(Console.OpenStandardOutput(), utf8) { NewLine = "\n", AutoFlush = true };
                // Whatever else the game prints must not reach the protocol stream.
                Console.SetOut(Console.Error);
            }
            else
            {
                var client = new TcpClient((string)env["PLAYFORGE_ADDR"], int.Parse((string)env["PLAYFORGE_PORT"], CultureInfo.InvariantCulture));
                client.NoDelay = true;
                NetworkStream stream = client.GetStream();
                input = new StreamReader(stream, utf8);
                output = new StreamWriter(stream, utf8) { NewLine = "\n", AutoFlush = true };
            }
        }

        internal void Send(object msg)
        {
            output.Write(Json.Write(msg) + "\n");
            output.Flush();
        }

        internal Dictionary<string, object> Receive()
        {
            string line = input.ReadLine();
            if (line == null) throw new ExperimentFinished("playforge closed the connection");
            var msg = Json.Parse(line) as Dictionary<string, object>;
            if (msg == null) throw new ProtocolError("a line that is not a JSON object: " + line);
            return msg;
        }
    }

    /// <summary>A connected game: Episodes() yields what playforge asks it to play.</summary>
    public class Game
    {
        readonly Link link;
        /// <summary>The settings of the episode in progress (before the first: the worker's, from PLAYFORGE_SETTINGS).</summary>
        public Dictionary<string, object> Settings;
        public Episode Current;

        internal Game(Link link, IDictionary env)
        {
            this.link = link;
            string s = env["PLAYFORGE_SETTINGS"] as string;
            Settings = (string.IsNullOrEmpty(s) ? null : Json.Parse(s) as Dictionary<string, object>) ?? new Dictionary<string, object>();
        }

        public IEnumerable<Episode> Episodes()
        {
            for (;;)
            {
                if (Current != null && !Current.Done) throw new ProtocolError("episode " + Current.Id + " ended without an outcome");
                var msg = link.Receive();
                string kind = Json.Get(msg, "type") as string;
                if (kind == "stop") yield break;
                if (kind != "episode") throw new ProtocolError("message " + Json.Write(kind) + "; expected an episode or stop");
                Current = new Episode(link, msg);
                Settings = Current.Settings;
                yield return Current;
            }
        }

        /// <summary>A line for playforge's record of the game (kept with a failed episode's error).</summary>
        public void Log(string message)
        {
            link.Send(Json.Object("type", "log", "message", message));
        }
    }

    public static class Bridge
    {
        public const int Protocol = 1;
        static Game game;

        /// <summary>Connects to the playforge that started this process and introduces the game: its
        /// name, its declared parameters, the measures its outcomes report, its play styles and
        /// design variants. `env` defaults to the process's environment.</summary>
        public static Game Connect(string name, IList<Param> parameters = null, IList<string> measures = null,
            IList<string> styles = null, IList<string> variants = null, IDictionary env = null)
        {
            env = env ?? Environment.GetEnvironmentVariables();
            if (!env.Contains("PLAYFORGE_PROTOCOL")) throw new NoDriver("not started by playforge (no PLAYFORGE_PROTOCOL in the environment)");
            string protocol = env["PLAYFORGE_PROTOCOL"] as string;
            if (protocol != Protocol.ToString(CultureInfo.InvariantCulture))
                throw new ProtocolError("PLAYFORGE_PROTOCOL=" + protocol + "; this client speaks " + Protocol);
            var link = new Link(env);
            var ps = new List<object>();
            if (parameters != null)
                foreach (Param p in parameters) ps.Add(Json.Object("name", p.Name, "min", p.Min, "max", p.Max, "integer", p.Integer));
            link.Send(Json.Object(
                "type", "hello",
                "protocol", (long)Protocol,
                "nonce", (env["PLAYFORGE_NONCE"] as string) ?? "",
                "game", name,
                "params", ps,
                "measures", Strings(measures),
                "styles", Strings(styles),
                "variants", Strings(variants)));
            var answer = link.Receive();
            if ((Json.Get(answer, "type") as string) != "welcome")
                throw new ProtocolError("playforge refused the game: " + (Json.Get(answer, "message") as string ?? Json.Write(answer)));
            game = new Game(link, env);
            return game;
        }

        static List<object> Strings(IList<string> xs)
        {
            var out_ = new List<object>();
            if (xs != null) foreach (string x in xs) out_.Add(x);
            return out_;
        }

        static Episode InProgress()
        {
            if (game == null || game.Current == null || game.Current.Done)
                throw new ProtocolError("no episode in progress; expected Connect() and an episode from Episodes()");
            return game.Current;
        }

        /// <summary>Select of the episode in progress.</summary>
        public static int Select(int n, IList<double> weights = null, IList<string> labels = null)
        {
            return InProgress().Select(n, weights, labels);
        }

        /// <summary>Outcome of the episode in progress.</summary>
        public static void Outcome(double score, IDictionary<string, double> measures = null)
        {
            InProgress().Outcome(score, measures);
        }

        /// <summary>The settings of the episode in progress.</summary>
        public static Dictionary<string, object> Settings()
        {
            if (game == null)
            {
                string s = Environment.GetEnvironmentVariable("PLAYFORGE_SETTINGS");
                return (string.IsNullOrEmpty(s) ? null : Json.Parse(s) as Dictionary<string, object>) ?? new Dictionary<string, object>();
            }
            return game.Settings;
        }
    }

    /// <summary>The JSON the protocol needs: objects (Dictionary), arrays (List), strings, numbers
    /// (kept as their text until read, so that a 64-bit seed loses nothing), true, false, null.</summary>
    public static class Json
    {
        /// <summary>A number as it was written.</summary>
        public class Number
        {
            public readonly string Text;
            public Number(string text) { Text = text; }
            public override string ToString() { return Text; }
        }

        public static object Get(Dictionary<string, object> o, string key)
        {
            object v;
            return o != null && o.TryGetValue(key, out v) ? v : null;
        }

        /// <summary>A number's text, or a string's (seeds come as decimal strings).</summary>
        static string Text(object v)
        {
            return v is Number ? ((Number)v).Text : v as string;
        }

        public static ulong ToULong(object v)
        {
            string s = Text(v);
            ulong x;
            if (s == null || !ulong.TryParse(s, NumberStyles.None, CultureInfo.InvariantCulture, out x))
                throw new ProtocolError("`" + Write(v) + "`; expected a whole number from 0 to 2^64 - 1");
            return x;
        }

        public static long ToLong(object v)
        {
            string s = Text(v);
            long x;
            if (s == null || !long.TryParse(s, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out x))
                throw new ProtocolError("`" + Write(v) + "`; expected a whole number");
            return x;
        }

        public static double ToDouble(object v)
        {
            string s = Text(v);
            double x;
            if (s == null || !double.TryParse(s, NumberStyles.Float, CultureInfo.InvariantCulture, out x))
                throw new ProtocolError("`" + Write(v) + "`; expected a number");
            return x;
        }

        /// <summary>Alternating keys and values.</summary>
        public static SortedDictionary<string, object> Object(params object[] kv)
        {
            var o = new SortedDictionary<string, object>(StringComparer.Ordinal);
            for (int i = 0; i + 1 < kv.Length; i += 2) o[(string)kv[i]] = kv[i + 1];
            return o;
        }

        public static string Write(object v)
        {
            var sb = new StringBuilder();
            Write(sb, v);
            return sb.ToString();
        }

        static void Write(StringBuilder sb, object v)
        {
            if (v == null) sb.Append("null");
            else if (v is string) Quote(sb, (string)v);
            else if (v is bool) sb.Append((bool)v ? "true" : "false");
            else if (v is double) sb.Append(((double)v).ToString("R", CultureInfo.InvariantCulture));
            else if (v is long) sb.Append(((long)v).ToString(CultureInfo.InvariantCulture));
            else if (v is int) sb.Append(((int)v).ToString(CultureInfo.InvariantCulture));
            else if (v is Number) sb.Append(((Number)v).Text);
            else if (v is IDictionary)
            {
                sb.Append('{');
                bool first = true;
                foreach (DictionaryEntry e in (IDictionary)v)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    Quote(sb, (string)e.Key);
                    sb.Append(':');
                    Write(sb, e.Value);
                }
                sb.Append('}');
            }
            else if (v is IEnumerable)
            {
                sb.Append('[');
                bool first = true;
                foreach (object x in (IEnumerable)v)
                {
                    if (!first) sb.Append(',');
                    first = false;
                    Write(sb, x);
                }
                sb.Append(']');
            }
            else throw new ProtocolError("cannot write a " + v.GetType().Name + " as JSON");
        }

        static void Quote(StringBuilder sb, string s)
        {
            sb.Append('"');
            foreach (char c in s)
            {
                switch (c)
                {
                    case '"': sb.Append("\\\""); break;
                    case '\\': sb.Append("\\\\"); break;
                    case '\n': sb.Append("\\n"); break;
                    case '\r': sb.Append("\\r"); break;
                    case '\t': sb.Append("\\t"); break;
                    default:
                        if (c < 0x20) sb.Append("\\u").Append(((int)c).ToString("x4", CultureInfo.InvariantCulture));
                        else sb.Append(c);
                        break;
                }
            }
            sb.Append('"');
        }

        public static object Parse(string text)
        {
            int i = 0;
            object v = Value(text, ref i);
            Space(text, ref i);
            if (i != text.Length) throw Bad(text, i, "the end of the line");
            return v;
        }

        static ProtocolError Bad(string text, int i, string expected)
        {
            return new ProtocolError("JSON at character " + i + " of `" + (text.Length > 200 ? text.Substring(0, 200) + "…" : text) + "`; expected " + expected);
        }

        static void Space(string t, ref int i)
        {
            while (i < t.Length && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r' || t[i] == '\n')) i++;
        }

        static object Value(string t, ref int i)
        {
            Space(t, ref i);
            if (i >= t.Length) throw Bad(t, i, "a value");
            char c = t[i];
            if (c == '{')
            {
                var o = new Dictionary<string, object>();
                i++;
                Space(t, ref i);
                if (i < t.Length && t[i] == '}') { i++; return o; }
                for (;;)
                {
                    Space(t, ref i);
                    if (i >= t.Length || t[i] != '"') throw Bad(t, i, "a key in quotes");
                    string key = Str(t, ref i);
                    Space(t, ref i);
                    if (i >= t.Length || t[i] != ':') throw Bad(t, i, "`:`");
                    i++;
                    o[key] = Value(t, ref i);
                    Space(t, ref i);
                    if (i < t.Length && t[i] == ',') { i++; continue; }
                    if (i < t.Length && t[i] == '}') { i++; return o; }
                    throw Bad(t, i, "`,` or `}`");
                }
            }
            if (c == '[')
            {
                var a = new List<object>();
                i++;
                Space(t, ref i);
                if (i < t.Length && t[i] == ']') { i++; return a; }
                for (;;)
                {
                    a.Add(Value(t, ref i));
                    Space(t, ref i);
                    if (i < t.Length && t[i] == ',') { i++; continue; }
                    if (i < t.Length && t[i] == ']') { i++; return a; }
                    throw Bad(t, i, "`,` or `]`");
                }
            }
            if (c == '"') return Str(t, ref i);
            if (string.CompareOrdinal(t, i, "true", 0, 4) == 0) { i += 4; return true; }
            if (string.CompareOrdinal(t, i, "false", 0, 5) == 0) { i += 5; return false; }
            if (string.CompareOrdinal(t, i, "null", 0, 4) == 0) { i += 4; return null; }
            int start = i;
            while (i < t.Length && "+-0123456789.eE".IndexOf(t[i]) >= 0) i++;
            if (i == start) throw Bad(t, i, "a value");
            return new Number(t.Substring(start, i - start));
        }

        static string Str(string t, ref int i)
        {
            var sb = new StringBuilder();
            i++; // the opening quote
            while (i < t.Length)
            {
                char c = t[i++];
                if (c == '"') return sb.ToString();
                if (c != '\\') { sb.Append(c); continue; }
                if (i >= t.Length) break;
                char e = t[i++];
                switch (e)
                {
                    case 'n': sb.Append('\n'); break;
                    case 't': sb.Append('\t'); break;
                    case 'r': sb.Append('\r'); break;
                    case 'b': sb.Append('\b'); break;
                    case 'f': sb.Append('\f'); break;
                    case 'u':
                        if (i + 4 > t.Length) throw Bad(t, i, "four hex digits");
                        sb.Append((char)int.Parse(t.Substring(i, 4), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
                        i += 4;
                        break;
                    default: sb.Append(e); break;
                }
            }
            throw Bad(t, i, "a closing quote");
        }
    }
}
