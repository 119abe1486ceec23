"""caffe2.python.predictor: mobile_exporter (Export to init/predict NetDefs) and predictor_exporter
(PredictorExportMeta; its DB save/load are not provided)."""
