"""What grading writes: results.json, feedback pages, grades.csv, the class report, the signed ledger."""
