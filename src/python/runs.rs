//! The one Python run class (`playforge._core.Run`): a search command's run driven by ask and
//! tell ([`crate::drive::asktell`]) with requests, evaluations and outcomes as JSON text.
//! `Run.balance`, `Run.generate` and `Run.personas` start (or resume) one; the package's
//! `playforge.Balance`, `playforge.Generate` and `playforge.Personas` wrap it. Every run answers
//! the same calls through [`JsonRun`], implemented once for every driver's ask/tell; a driver
//! adds only how its outcome reads ([`Describe`]).

use super::value_error;
use crate::drive::asktell::{AskTell, BuiltIn};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

fn runtime_error(e: anyhow::Error) -> PyErr {
    PyRuntimeError::new_err(format!("{e:#}"))
}

/// What a driver adds for Python: its outcome as JSON, and the genes' names where candidates
/// have genes.
trait Describe: BuiltIn {
    fn outcome_json(o: &Self::Outcome) -> serde_json::Value;
    fn gene_names(&self) -> Option<Vec<String>> {
        None
    }
}

impl Describe for crate::balance::asktell::BuiltIn {
    fn outcome_json(o: &Self::Outcome) -> serde_json::Value {
        serde_json::json!({"dir": o.dir, "best": o.best, "history": o.history, "games_played": o.games_played, "reached": o.reached})
    }
}

impl Describe for crate::generate::asktell::BuiltIn {
    fn outcome_json(o: &Self::Outcome) -> serde_json::Value {
        serde_json::json!({
            "dir": o.dir,
            "best": o.best,
            "elites": o.archive.cells.len(),
            "cells": o.archive.n_cells(),
            "qd_score": o.archive.qd_score(),
            "coverage": o.archive.coverage(),
            "history": o.history,
            "games_played": o.games_played,
        })
    }
    fn gene_names(&self) -> Option<Vec<String>> {
        Some(crate::generate::asktell::BuiltIn::gene_names(self))
    }
}

impl Describe for crate::persona::asktell::BuiltIn {
    fn outcome_json(os: &Self::Outcome) -> serde_json::Value {
        let list = os.iter().map(
            |(_, o)| serde_json::json!({"name": o.name, "dir": o.dir, "best": o.best.to_string(), "goal": o.goal, "history": o.history}),
        );
        serde_json::Value::Array(list.collect())
    }
}

/// The calls every run answers, JSON in and out (errors as the Python exceptions they become).
trait JsonRun: Send {
    fn ask(&mut self) -> PyResult<Option<String>>;
    fn tell(&mut self, evals: &str) -> PyResult<()>;
    fn evaluate(&self, request: &str) -> PyResult<String>;
    fn result(&self) -> Option<String>;
    fn dir(&self) -> PathBuf;
    fn gene_names(&self) -> Option<Vec<String>>;
}

impl<B: Describe> JsonRun for AskTell<B>
where
    B::Request: Serialize + DeserializeOwned,
    B::Eval: Serialize + DeserializeOwned,
{
    fn ask(&mut self) -> PyResult<Option<String>> {
        let req = AskTell::ask(self).map_err(runtime_error)?;
        req.map(|r| serde_json::to_string(&r).map_err(value_error)).transpose()
    }

    fn tell(&mut self, evals: &str) -> PyResult<()> {
        let evals: Vec<B::Eval> = serde_json::from_str(evals).map_err(|e| value_error(format!("tell: {e}")))?;
        AskTell::tell(self, evals).map_err(value_error)
    }

    fn evaluate(&self, request: &str) -> PyResult<String> {
        let req: B::Request = serde_json::from_str(request).map_err(|e| value_error(format!("evaluate: {e}")))?;
        let evals = AskTell::evaluate(self, &req).map_err(runtime_error)?;
        serde_json::to_string(&evals).map_err(value_error)
    }

    fn result(&self) -> Option<String> {
        self.outcome().map(|o| B::outcome_json(o).to_string())
    }

    fn dir(&self) -> PathBuf {
        AskTell::dir(self)
    }

    fn gene_names(&self) -> Option<Vec<String>> {
        self.built_in().gene_names()
    }
}

/// A search command's run driven by ask and tell: requests and evaluations as JSON text.
#[pyclass(name = "Run", module = "playforge._core")]
pub(super) struct PyRun(Mutex<Box<dyn JsonRun>>);

impl PyRun {
    fn run(&self) -> std::sync::MutexGuard<'_, Box<dyn JsonRun>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn of(run: impl JsonRun + 'static) -> PyRun {
        PyRun(Mutex::new(Box::new(run)))
    }
}

#[pymethods]
impl PyRun {
    /// A balance run of `config` (`playforge balance`), its seed, optimizer and output folder
    /// overridden where given; resumed from its checkpoint when `resume`.
    #[staticmethod]
    #[pyo3(signature = (config, seed = None, optimizer = None, out = None, resume = false))]
    fn balance(
        py: Python<'_>,
        config: String,
        seed: Option<u64>,
        optimizer: Option<String>,
        out: Option<String>,
        resume: bool,
    ) -> PyResult<PyRun> {
        use crate::balance::config::{BalanceConfig, OPTIMIZERS};
        let path = PathBuf::from(&config);
        let (mut cfg, text) = BalanceConfig::load(&path).map_err(value_error)?;
        if let Some(s) = seed {
            cfg.balance.seed = s;
        }
        if let Some(o) = optimizer {
            if !OPTIMIZERS.has(&o) {
                return Err(PyValueError::new_err(format!("optimizer {o:?}; expected {OPTIMIZERS}")));
            }
            cfg.balance.optimizer = o;
        }
        if let Some(o) = out {
            cfg.balance.out = o.into();
        }
        let at = py
            .detach(|| crate::balance::asktell::AskTell::start(cfg, &path, &text, resume, crate::exec::Executor::Local))
            .map_err(value_error)?;
        Ok(PyRun::of(at))
    }

    /// A generate run of `config` (`playforge generate`): its seed, algorithm (of the config's
    /// kind), evaluation budget and output folder overridden where given.
    #[staticmethod]
    #[pyo3(signature = (config, seed = None, algorithm = None, evaluations = None, out = None, resume = false))]
    fn generate(
        py: Python<'_>,
        config: String,
        seed: Option<u64>,
        algorithm: Option<String>,
        evaluations: Option<u64>,
        out: Option<String>,
        resume: bool,
    ) -> PyResult<PyRun> {
        use crate::generate::config::{ALGORITHMS, GenerateConfig};
        let path = PathBuf::from(&config);
        let (mut cfg, text) = GenerateConfig::load(&path).map_err(value_error)?;
        if let Some(s) = seed {
            cfg.generate.seed = s;
        }
        if let Some(a) = algorithm {
            if !ALGORITHMS.has(&a) || (a == "cma") != (cfg.generate.algorithm == "cma") {
                return Err(PyValueError::new_err(format!(
                    "algorithm {a:?}; expected {ALGORITHMS} of the config's kind (it is {:?})",
                    cfg.generate.algorithm
                )));
            }
            cfg.generate.algorithm = a;
        }
        if let Some(e) = evaluations {
            if e == 0 {
                return Err(PyValueError::new_err("evaluations 0; expected at least 1"));
            }
            cfg.generate.max_evaluations = e;
        }
        if let Some(o) = out {
            cfg.generate.out = o.into();
        }
        let at = py
            .detach(|| crate::generate::asktell::AskTell::start(cfg, &path, &text, resume, crate::exec::Executor::Local))
            .map_err(value_error)?;
        Ok(PyRun::of(at))
    }

    /// A persona run of `config` (`playforge personas`): its seed, generations and output
    /// folder overridden where given, `only` the personas named (all when not given).
    #[staticmethod]
    #[pyo3(signature = (config, seed = None, generations = None, only = None, out = None, resume = false))]
    fn personas(
        py: Python<'_>,
        config: String,
        seed: Option<u64>,
        generations: Option<u64>,
        only: Option<Vec<String>>,
        out: Option<String>,
        resume: bool,
    ) -> PyResult<PyRun> {
        let path = PathBuf::from(&config);
        let names = crate::persona::config::PersonaConfig::load(&path).map_err(value_error)?.0.list;
        let chosen = only
            .unwrap_or_default()
            .iter()
            .map(|n| {
                names.iter().position(|p| &p.name == n).ok_or_else(|| {
                    let known: Vec<&str> = names.iter().map(|p| p.name.as_str()).collect();
                    PyValueError::new_err(format!("only: no persona {n:?} in {config}; expected one of {}", known.join(", ")))
                })
            })
            .collect::<PyResult<Vec<usize>>>()?;
        let out = out.map(PathBuf::from);
        let at = py
            .detach(|| crate::persona::asktell::AskTell::start(&path, seed, generations, out.as_deref(), chosen, resume))
            .map_err(value_error)?;
        Ok(PyRun::of(at))
    }

    /// The next request as JSON (personas: the next games), or `None` when the run is over
    /// (its report.html is then written).
    fn ask(&self, py: Python<'_>) -> PyResult<Option<String>> {
        let next = py.detach(|| self.run().ask())?;
        if next.is_none() {
            finish_report(&self.run().dir());
        }
        Ok(next)
    }

    /// The evaluations (a JSON list; personas: the games' results) of the last request.
    fn tell(&self, evals: String) -> PyResult<()> {
        self.run().tell(&evals)
    }

    /// The built-in evaluation of a request (JSON in, JSON list out): any request, not only
    /// the asked ones.
    fn evaluate(&self, py: Python<'_>, request: String) -> PyResult<String> {
        py.detach(|| self.run().evaluate(&request))
    }

    /// The genes' names, in the order of a candidate's `genes` (a generate run's).
    fn gene_names(&self) -> PyResult<Vec<String>> {
        self.run().gene_names().ok_or_else(|| PyValueError::new_err("gene_names: only a generate run's candidates have named genes"))
    }

    /// The run's outcome as JSON once `ask()` returned `None`, else `None`.
    fn result(&self) -> Option<String> {
        self.run().result()
    }

    /// The run's folder; its checkpoint(s), written after every step, resume it.
    fn dir(&self) -> String {
        self.run().dir().display().to_string()
    }
}

/// A finished ask/tell run's report.html, as the command line writes it at the end of a run (a
/// failure leaves the run's own outputs as they are).
fn finish_report(dir: &Path) {
    if let Err(e) = crate::web::report::write(dir) {
        eprintln!("warning: report.html not written in {}: {e:#}", dir.display());
    }
}
